"""The checks of bench/serving_check.py (run that script; it says what each
check does): common.py, the run's state and what every check shares;
graphs.py, serving, layers and retired; errors.py, capture_error and
disagree; costs.py, compile, memory and timing.
"""
