"""Extraction: traces of one program at one or more rank counts as a readable
model that scales (:mod:`~pevpm.trace.extract.extract`): token streams
(:mod:`~pevpm.trace.extract.tokens`), compressed into loops, ranks merged and
their peers written as expressions, every number fitted over the counts
(:mod:`~pevpm.trace.extract.scaling`).

>>> from pevpm.trace.extract.scaling import fit
>>> fit([2, 4, 8], [5000, 2500, 1250], whole=True).text
'10000 / numprocs'
"""
