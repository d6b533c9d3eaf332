"""Statistics over per-cell run tallies: intervals, pass^k / safe^k, miss rates, overdispersion.

Every function here is pure: plain values in, frozen values out, no I/O, and no
randomness without an explicit seed. Each cites its source in its docstring and
returns NaN or ``None`` where the data cannot identify it. The one exception is named
as such: ``freeze_prereg``, ``load_frozen_prereg`` and ``prereg_lock_path`` (module
``_prereg_file``) read and write a pre-registration file and its lock.
"""

from ._agreement import Agreement, agreement, cohen_kappa
from ._anytime import ANYTIME_UPPER_METHOD, anytime_upper, log_evidence_below, shown_below
from ._betabinom import (
    ANOVA_ESTIMATOR,
    MOMENTS_ESTIMATOR,
    MleFit,
    MomentsFit,
    anova_icc,
    fit_mle,
    fit_moments,
)
from ._bootstrap import bootstrap_mean, bootstrap_ratio, percentile_interval, resample_counts
from ._gradient import Gradient, capability_gradient, spearman_rows
from ._intervals import clopper_pearson, prevalence_upper, wilson
from ._miss import MissRate, audit_miss_rate, miss_probability, miss_weights
from ._passk import choose_ratio, pass_at_k, pass_pow_k, pool_mean, safe_pow_k
from ._plan import (
    CellPlan,
    PopulationPlan,
    all_clean_probability,
    plan_cells,
    population_plans,
    runs_to_detect,
)
from ._population import POPULATION_METHOD, PopulationMiss, population_miss
from ._prereg import (
    ClaimResult,
    Prereg,
    analyze,
    load_prereg,
    prereg_digest,
    select_pool,
)
from ._prereg_file import freeze_prereg, load_frozen_prereg, prereg_lock_path
from ._sequence import (
    CS_METHOD,
    IdentifiedRange,
    beta_binomial_cs,
    confidence_sequence,
    identified_range,
)
from ._stochastic import AlwaysFail, always_fail_upper, is_stochastic, stochastic_damage_share
from ._summary import (
    CellStats,
    Compat,
    PoolEstimate,
    PoolSummary,
    StatsSummary,
    cell_stats,
    pool_summary,
    summarize,
)
from ._tail import TailCheck, check_tail, hill_index
from ._tally import CellKey, CellTally, distinguish_versions, merge_tallies, versioned_names

__all__ = [
    "ANOVA_ESTIMATOR",
    "ANYTIME_UPPER_METHOD",
    "CS_METHOD",
    "MOMENTS_ESTIMATOR",
    "POPULATION_METHOD",
    "Agreement",
    "AlwaysFail",
    "CellKey",
    "CellPlan",
    "CellStats",
    "CellTally",
    "ClaimResult",
    "Compat",
    "Gradient",
    "IdentifiedRange",
    "MissRate",
    "MleFit",
    "MomentsFit",
    "PoolEstimate",
    "PoolSummary",
    "PopulationMiss",
    "PopulationPlan",
    "Prereg",
    "StatsSummary",
    "TailCheck",
    "agreement",
    "all_clean_probability",
    "always_fail_upper",
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
    "choose_ratio",
    "clopper_pearson",
    "cohen_kappa",
    "confidence_sequence",
    "distinguish_versions",
    "fit_mle",
    "fit_moments",
    "freeze_prereg",
    "hill_index",
    "identified_range",
    "is_stochastic",
    "load_frozen_prereg",
    "load_prereg",
    "log_evidence_below",
    "merge_tallies",
    "miss_probability",
    "miss_weights",
    "pass_at_k",
    "pass_pow_k",
    "percentile_interval",
    "plan_cells",
    "pool_mean",
    "pool_summary",
    "population_miss",
    "population_plans",
    "prereg_digest",
    "prereg_lock_path",
    "prevalence_upper",
    "resample_counts",
    "runs_to_detect",
    "safe_pow_k",
    "select_pool",
    "shown_below",
    "spearman_rows",
    "stochastic_damage_share",
    "summarize",
    "versioned_names",
    "wilson",
]
