"""The package's defaults for the sizes of its Monte Carlo samples: one per idea.

Every entry point that draws scenarios of a belief or posterior draws behind one
estimate takes its default from here, so the same word has the same default wherever it
is set (docs/concepts.md, "Vocabulary").
"""

from __future__ import annotations

#: The worlds a belief holds (``n_scenarios``): the posterior draws, bootstrap refits or
#: confidence-set points a Bayes or maximin program averages or guards over. 32: on the
#: Bayesian-fairness protocols (benchmarks/results/bayesian_fairness_k32_to_2048_*.txt)
#: the Bayes policy's true and held-out values moved by at most a few thousandths from
#: K = 32 to K = 2048, and the program at K = 32 solves in a fraction of a second
#: (0.2-0.4 s for a 1000-cell belief under a tolerance, benchmarks/results/beliefs_*.txt),
#: while each scenario multiplies the program's coupling rows.
N_SCENARIOS = 32

#: The Monte Carlo draws behind one estimate (``n_draws``): a posterior's credible
#: interval, the audit's posterior of a deviation. 1000: the 2.5% and 97.5% quantiles of
#: 1000 draws are within about 0.09 posterior standard deviations of the exact ones (the
#: Monte Carlo error sqrt(q (1 - q) / n) / density; 200 draws: 0.19), at milliseconds for
#: the exact Dirichlet draws of tabular data. The Bayesian bootstrap of numeric features
#: refits the outcome model once per draw, which dominates its cost: pass fewer there to
#: trade precision for time.
N_DRAWS = 1000
