"""The ``fedsec`` command line."""
