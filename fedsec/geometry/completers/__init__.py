"""The EDM completion algorithms, one per module.

Use them through :mod:`fedsec.geometry.completion` (which re-exports the five
functions and holds the :func:`~fedsec.geometry.completion.complete`
dispatcher); the modules here hold one algorithm each, with its paper.
"""
