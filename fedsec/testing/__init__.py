"""Public conformance checks for protocols, backends, attacks, defences and scorers.

Third-party components can run the same checks the built-ins pass, in the
style of scikit-learn's ``check_estimator``::

    from fedsec.testing import check_protocol
    check_protocol(MyProtocol)

Each check raises ``AssertionError`` with a message saying what failed. The checks live
by kind: :mod:`fedsec.testing.runs` (protocols, backends, the shared helpers),
:mod:`fedsec.testing.attack`, :mod:`fedsec.testing.defense` and
:mod:`fedsec.testing.scorer` (on the synthetic truths of :mod:`fedsec.testing.cases`).
"""

from __future__ import annotations

from fedsec.testing.attack import (
    COALITIONS_TRIED,
    check_attack,
    check_convergence_record,
    coalitions,
)
from fedsec.testing.defense import check_defense
from fedsec.testing.runs import (
    assert_same_transcript,
    assert_secret_unseen,
    check_backend,
    check_protocol,
    check_rejects_unknown_parameter,
    small_federation,
)
from fedsec.testing.scorer import check_scorer

__all__ = ["COALITIONS_TRIED", "assert_same_transcript", "assert_secret_unseen",
           "check_attack", "check_backend", "check_convergence_record", "check_defense",
           "check_protocol", "check_rejects_unknown_parameter", "check_scorer", "coalitions",
           "small_federation"]
