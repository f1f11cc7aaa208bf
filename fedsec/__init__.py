"""fedsec: audit the privacy of federated-learning protocols.

Run a protocol among simulated parties, record every message in a
transcript, and attack what one adversary saw. Importing this package has
no side effects; components are loaded on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
