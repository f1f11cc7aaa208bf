"""Attacks, one package per protocol family.

Each component registers itself when its module is imported; the registry imports only
the module of a name it is asked for (see :mod:`fedsec.builtin_index`), so this package
imports none of them.

Installed as ``fedsec.attacks``; mirrors :mod:`fedsec.protocols`. Attacks that
serve several families stay at the top: ``contribution-readout`` and
``mask-share-coalition`` (secure sums) and ``linear-inference`` (the linear-system engine of
:mod:`~fedsec.attacks.linear_systems`, with one equation extractor per family).
"""
