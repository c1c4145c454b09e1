"""The names and defaults of the scoring options: methods, penalties, intervals, resampling.

No numpy or scipy here, so the command line builds its parser and answers ``--help``
without loading the numeric code; ``scoring``, ``bootstrap`` and ``bws.filemode`` take
their names and defaults from this module.
"""

METHODS = ("counting", "bradley_terry", "plackett_luce")
METHOD_NAMES = {
    "counting": "Counting",
    "bradley_terry": "Bradley-Terry",
    "plackett_luce": "Plackett-Luce",
}
# What a scheme is scored with when its configuration does not say.
DEFAULT_METHOD = "counting"
DEFAULT_ALPHA = 0.01
DEFAULT_MAX_ITER = 1000
DEFAULT_TOLERANCE = 1e-6
# How a run's intervals are made: calibrated (the default: posterior intervals of the
# empirical-Bayes fit, moderated t for counting; coverage in benchmarks/RESULTS.md) or
# the cluster percentile bootstrap (kept as an option; it covers too rarely at few
# appearances per item, also recorded there).
INTERVAL_METHODS = ("calibrated", "bootstrap")
DEFAULT_INTERVALS = "calibrated"
# Resamples of a bootstrap run when none are asked for.
DEFAULT_RESAMPLES = 1000
# How the model fits are penalised: empirical_bayes (the prior variance estimated from the
# data, the default) or fixed (alpha as given).
SHRINKAGE = ("empirical_bayes", "fixed")
# The clusters the bootstrap resamples.
UNITS = ("tuple", "judgment", "annotator")
