"""pevpm.vm"""
