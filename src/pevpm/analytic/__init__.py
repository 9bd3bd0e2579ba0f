"""pevpm.analytic"""
