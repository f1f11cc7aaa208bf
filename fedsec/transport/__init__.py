"""How messages travel between parties: in one process (the default), or over TCP between
party processes (:mod:`fedsec.transport.tcp`, ``fedsec run --transport tcp``).

This package's own module imports nothing: each party's process loads only
:mod:`fedsec.transport.party` and :mod:`fedsec.transport.frame`.
"""

#: The transports ``fedsec run --transport`` knows.
TRANSPORTS = ("inproc", "tcp")
