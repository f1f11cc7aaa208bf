"""Masking backends: how values are protected in transit and combined.

``plain`` (no protection, the baseline), ``noise`` (additive masks from
AES-CTR), ``paillier`` (python-paillier keys, packed fixed-point plaintexts)
and ``ckks`` (TenSEAL). Each registers itself when its module is imported, on the
first lookup of its name (see :mod:`fedsec.builtin_index`); protocols use the
primitives in :mod:`fedsec.backends.primitives`.
"""
