"""pevpm.machine"""
