"""The names of the distribution families fitted unless told otherwise.

Kept apart from :mod:`pevpm.stats.fitting` (which loads scipy) so that a
command's help text can name them without loading scipy.

>>> from pevpm.stats.family_names import DEFAULT_FAMILIES
>>> DEFAULT_FAMILIES[0]
'pearson5'
"""

#: Families tried by :func:`pevpm.stats.fitting.select_family` unless told
#: otherwise.  The generalised gamma nests all of them, so it is a diagnostic,
#: not a candidate.
DEFAULT_FAMILIES = ("pearson5", "weibull", "gamma", "lognormal", "exponential")
