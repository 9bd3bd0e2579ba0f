"""pevpm.model"""
