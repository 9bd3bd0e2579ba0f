"""Statistics: distribution families, fitting and goodness of fit, trends, outliers, histograms."""
