"""An example third-party plug-in for fedsec.

Its attack, defence and scorer reach fedsec through entry points (``fedsec.attacks``,
``fedsec.defenses``, ``fedsec.scorers``): none is registered by importing this package.
:mod:`fedsec_example_plugin.broken` holds two attacks that break the attack contract on
purpose, named by ``module:Class`` only.
"""
