"""cuda"""
