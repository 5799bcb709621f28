# "Allocation of Parameters in Transformers" (Yu et al., 2025).
# Not written yet: see the paper's issue. When it has rules, it appends its id to PAPERS.
