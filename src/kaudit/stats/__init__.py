"""Statistics over per-cell run tallies: intervals, pass^k / safe^k, miss rates, overdispersion.

Every function here is pure: plain values in, frozen values out, no I/O, and no
randomness without an explicit seed. Each cites its source in its docstring and
returns NaN or ``None`` where the data cannot identify it. The one exception is named
as such: ``freeze_prereg``, ``load_frozen_prereg`` and ``prereg_lock_path`` (module
``_prereg_file``) read and write a pre-registration file and its lock.
"""

from ._agreement import agreement, cohen_kappa
from ._anytime import anytime_upper, log_evidence_below, shown_below
from ._betabinom import anova_icc, fit_mle, fit_moments
from ._bootstrap import bootstrap_mean, bootstrap_ratio, resample_counts
from ._gradient import capability_gradient
from ._intervals import clopper_pearson, prevalence_upper, wilson
from ._miss import audit_miss_rate, miss_probability, miss_weights
from ._passk import pass_at_k, pass_pow_k, safe_pow_k
from ._plan import all_clean_probability, plan_cells, population_plans, runs_to_detect
from ._population import population_miss
from ._prereg import analyze
from ._prereg_file import freeze_prereg, load_frozen_prereg, prereg_lock_path
from ._sequence import beta_binomial_cs, identified_range
from ._stochastic import is_stochastic, stochastic_damage_share
from ._summary import StatsSummary, cell_stats, pool_summary, summarize
from ._tail import check_tail, hill_index
from ._tally import CellKey, CellTally

__all__ = [
    "CellKey",
    "CellTally",
    "StatsSummary",
    "agreement",
    "all_clean_probability",
    "analyze",
    "anova_icc",
    "anytime_upper",
    "audit_miss_rate",
    "beta_binomial_cs",
    "bootstrap_mean",
    "bootstrap_ratio",
    "capability_gradient",
    "cell_stats",
    "check_tail",
    "clopper_pearson",
    "cohen_kappa",
    "fit_mle",
    "fit_moments",
    "freeze_prereg",
    "hill_index",
    "identified_range",
    "is_stochastic",
    "load_frozen_prereg",
    "log_evidence_below",
    "miss_probability",
    "miss_weights",
    "pass_at_k",
    "pass_pow_k",
    "plan_cells",
    "pool_summary",
    "population_miss",
    "population_plans",
    "prereg_lock_path",
    "prevalence_upper",
    "resample_counts",
    "runs_to_detect",
    "safe_pow_k",
    "shown_below",
    "stochastic_damage_share",
    "summarize",
    "wilson",
]
