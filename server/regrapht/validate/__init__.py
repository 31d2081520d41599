"""validate"""
