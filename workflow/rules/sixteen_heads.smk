# "Are Sixteen Heads Really Better than One?" (Michel, Levy & Neubig, NeurIPS 2019).
# Not written yet: see the paper's issue. When it has rules, it appends its id to PAPERS.
