"""Privacy in (epsilon, delta) beside what attacks recover.

- :mod:`fedsec.privacy.mechanism`: what a noise-adding defence declares (its
  :class:`~fedsec.privacy.mechanism.Mechanism`: noise, sensitivity, releases, sampling), and
  why the masking backends are no mechanism.
- :mod:`fedsec.privacy.accountant`: epsilon at a stated delta for a run's declared noise
  (Google's ``dp-accounting``: PLD, with RDP as a cross-check); the ``privacy`` block of a
  run's results.
- :mod:`fedsec.privacy.gaussian`: the analytic Gaussian mechanism (Balle and Wang 2018), the
  accountant's reference.
- :mod:`fedsec.privacy.empirical`: lower bounds on epsilon from an adversary's guesses (the
  one-run audit of Steinke, Nasr and Jagielski 2023; the multi-run hypothesis test).
- :mod:`fedsec.privacy.gaussian_audit`: the one-run audit of a Gaussian claim (Mahloujifar,
  Melis and Chaudhuri 2024), which the same guesses test much further.
- :mod:`fedsec.privacy.canary`: canaries for the white-box one-run audit.
"""
