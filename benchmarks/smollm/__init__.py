"""smollm"""
