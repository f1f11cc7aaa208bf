"""Masking backends: how values are protected in transit and combined.

``plain`` (no protection, the baseline), ``noise`` (additive masks from
AES-CTR), ``paillier`` (python-paillier keys, packed fixed-point plaintexts)
and ``ckks`` (TenSEAL). Built-ins register from :mod:`fedsec.backends.builtin`;
protocols use the primitives in :mod:`fedsec.backends.primitives`.
"""
