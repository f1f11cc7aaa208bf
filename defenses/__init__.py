"""Defences, one package per protocol family.

Each component registers itself when its module is imported; the registry imports only
the module of a name it is asked for (see :mod:`fedsec.builtin_index`), so this package
imports none of them.

Installed as ``fedsec.defenses``; mirrors :mod:`fedsec.protocols`. Defences
that serve any protocol stay at the top (``gaussian-noise``).
"""
