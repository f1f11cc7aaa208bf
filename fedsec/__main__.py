"""``python -m fedsec``: the ``fedsec`` command, for an environment whose scripts folder is not
on the path."""

import sys

from fedsec.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
