"""One audit road (issue 40): every model and question audited by the same steps, in the papers' order.

Read the inputs (:mod:`~ppdm.pipeline.read`, :mod:`~ppdm.pipeline.checks`, missing values in
:mod:`~ppdm.pipeline.missing`) → resolve the attacker once (:meth:`ThreatModel.resolve`, handed to
every step) → the question (an attribute, a regressor's target or input in
:mod:`~ppdm.pipeline.regression`, membership in :mod:`~ppdm.pipeline.membership`) → the estimate
(:mod:`~ppdm.pipeline.estimate`, a registry of methods chosen by ``method=``, what each reads in
one table, :mod:`~ppdm.pipeline.capabilities`) → the proof on whole counts (:mod:`~ppdm.pipeline.prove`)
→ the baselines and the strongest attacker (:mod:`~ppdm.pipeline.baselines`) → one result
(:class:`~ppdm.pipeline.findings.Findings`), which :func:`ppdm.audit` gives its views and the target.
:mod:`~ppdm.pipeline.run` runs them in that order; ``defend`` calls the same steps.
"""
