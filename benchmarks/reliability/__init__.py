"""reliability"""
