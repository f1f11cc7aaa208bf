"""Data files shipped inside the package, read only after their checksum matches.

Every file under ``fedsec/data/files/`` has its SHA-256 recorded in
:data:`SHA256` (values from the dataset documentation, verified when the files
were added). Each read recomputes the hash, so a truncated or altered
installation fails loudly instead of producing a subtly different benchmark.
See ``files/ATTRIBUTION.md`` for the sources and licences.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
from collections.abc import Mapping
from importlib.resources import files
from types import MappingProxyType
from typing import TYPE_CHECKING

from fedsec.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

SHA256: Mapping[str, str] = MappingProxyType({
    "sonar.csv": "f197dd7bf4298ddee224d848267eec7f38f0b4d73cbd68f6086057e5c7fc902c",
    "ionosphere.csv": "e41816d01388a38f82ea818091bd62d2bd5ce4a836acd2efd226862df259e2ff",
    "pima_diabetes.csv": "e3f187de41f347d9d0cbfe94fab05fb26ea6d870eae5f65eb6df49a3024c7310",
    "heart_cleveland.csv": "d6416500b131c587f0e69cd080abbcdcbd262df63e9ec8e73bddb9b6d3c2e777",
    "fashion_mnist_1k.csv.gz": "456b0974459bced2374d8dc96761a9258d5d6c98ade2b7a2a5cbe31c0591bf42",
    "mnist_5k.csv.gz": "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d",
    "mfeat/mfeat-fac.csv.gz": "dd722f826cd9ccbd8ce3890f1ebc7666c4d30e59687e552fc8937169c2b32280",
    "mfeat/mfeat-fou.csv.gz": "d7013cefe3a1ce9b9700e5721961c9277103434e42cb5f7edf943db59a3c3107",
    "mfeat/mfeat-kar.csv.gz": "ac0c4b879c7a74d33f6ec61678eeaac535c3eda7725b353ea482f66243a95514",
    "mfeat/mfeat-mor.csv.gz": "895859c43f73dfad860cef225c7f6f6f50cfc2b1f8dad5df548445dd1a9be9e3",
    "mfeat/mfeat-pix.csv.gz": "772b7b3da0cf2c7fde4ba72ebb80a7f4255b2b266d8b20fdc19008fe2b4aefab",
    "mfeat/mfeat-zer.csv.gz": "b6d96ff0a639ef36e355867a4cb74d8ea4e033a824bbded738787813e0f592cc",
    "nutrimouse/diet.csv": "7b74c89740ce61d1a9d8f31244ac450db56510a225f2309da4da02a09c0f79e6",
    "nutrimouse/gene.csv": "a06b350192e12300d50d024328125670470a77996f20d6d339ee3d3264a08c7d",
    "nutrimouse/genotype.csv": "d504178dbfb1fd9dd48731b3c65bce7d3b1dc45911c953df63c9d96fe1d76c0f",
    "nutrimouse/lipid.csv": "91c302db9c54d520bf0212df92fe8c1f65b2d6e612c6d120de80cb4359324a05",
    "basic_motions/BasicMotions_TRAIN.ts.gz":
        "9bf98638f7147d4eaa563e80bd3fc8099bb16b80ea8f5992696921514d65fc7d",
    "basic_motions/BasicMotions_TEST.ts.gz":
        "0d72101300d5d9649e5ef2117dc426840f2bff4ba176d0b9e2baa16cced25f05",
})
"""SHA-256 hex digest of each packaged file as stored (compressed for ``.gz``), keyed by its
path under ``files/``."""


def _files_root() -> Traversable:
    return files("fedsec.data").joinpath("files")


def read_packaged(path: str) -> bytes:
    """The bytes of a packaged data file, after checking its SHA-256.

    Parameters
    ----------
    path : str
        Path under ``fedsec/data/files/`` with ``/`` separators, a key of
        :data:`SHA256`.

    Returns
    -------
    bytes
        The raw file content (still gzip-compressed for ``.gz`` files).

    Raises
    ------
    fedsec.errors.DataError
        If the file has no recorded checksum, is missing, or its hash differs
        from the recorded one (the message gives both hashes).

    Examples
    --------
    >>> read_packaged("sonar.csv")[:6]
    b'f1,f2,'
    """
    expected = SHA256.get(path)
    if expected is None:
        raise DataError(
            f"No checksum is recorded for packaged data file {path!r}; known files: "
            f"{', '.join(sorted(SHA256))}."
        )
    resource = _files_root()
    for part in path.split("/"):
        resource = resource.joinpath(part)
    try:
        data = resource.read_bytes()
    except OSError as exc:
        raise DataError(
            f"Packaged data file {path!r} cannot be read ({exc}). The fedsec installation "
            "is corrupt or incomplete: reinstall fedsec."
        ) from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise DataError(
            f"Packaged data file {path!r} failed its checksum: expected sha256 {expected}, "
            f"got {actual}. The fedsec installation is corrupt: reinstall fedsec "
            "(for example `pip install --force-reinstall fedsec`)."
        )
    return data


def read_packaged_csv(path: str, *, header: bool = True) -> pd.DataFrame:
    """Parse a packaged CSV (gzip-compressed when ``path`` ends in ``.gz``).

    Parameters
    ----------
    path : str
        Key of :data:`SHA256`.
    header : bool, default True
        Whether the first line names the columns.

    Returns
    -------
    pandas.DataFrame
        A fresh frame; empty fields become NaN.

    Examples
    --------
    >>> read_packaged_csv("nutrimouse/genotype.csv").shape
    (40, 1)
    """
    import pandas as pd

    data = read_packaged(path)
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    return pd.read_csv(io.BytesIO(data), header=0 if header else None)


def verify_packaged_files() -> tuple[str, ...]:
    """Check the SHA-256 of every packaged data file.

    Returns
    -------
    tuple of str
        The paths checked.

    Raises
    ------
    fedsec.errors.DataError
        At the first missing or altered file.

    Examples
    --------
    >>> "sonar.csv" in verify_packaged_files()
    True
    """
    for path in SHA256:
        read_packaged(path)
    return tuple(SHA256)
