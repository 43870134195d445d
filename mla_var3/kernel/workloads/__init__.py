"""Workloads shared by plans of several backends (ours, peers, baselines): inputs, reference, roofline."""
