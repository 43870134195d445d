"""Reduction peers: quack's RMSNorm."""
