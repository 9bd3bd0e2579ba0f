"""pevpm.report"""
