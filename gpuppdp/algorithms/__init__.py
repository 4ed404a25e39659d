"""Anonymization beyond full-domain generalization."""
