"""pevpm.bench"""
