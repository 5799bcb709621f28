# Shared datasets: the offline code corpus (CodeParrot stand-in), its tokenizer and
# the tokenised splits. Every dataset is written with a data card (sizes, seed, sha256).

CORPUS = f"{RESULTS}/data/code_corpus"
# The unigram and bigram levels of the corpus' valid split (rule code_reference_levels).
CODE_LEVELS = f"{CORPUS}/tokens/reference_levels.json"


rule code_corpus:
    output:
        train=f"{CORPUS}/train.jsonl.gz",
        valid=f"{CORPUS}/valid.jsonl.gz",
        card=f"{CORPUS}/card.json",
    log:
        f"{RESULTS}/logs/data/code_corpus.log",
    benchmark:
        f"{RESULTS}/benchmarks/data/code_corpus.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        max_bytes=config["corpus"]["max_bytes"],
        valid_fraction=config["corpus"]["valid_fraction"],
        seed=config["corpus"]["seed"],
        out_dir=parent_dir,
    shell:
        "python -m repro data corpus --out-dir {params.out_dir} --max-bytes {params.max_bytes} "
        "--valid-fraction {params.valid_fraction} --seed {params.seed} > {log} 2>&1"


rule code_tokenizer:
    input:
        rules.code_corpus.output.train,
    output:
        f"{CORPUS}/tokenizer.json",
    log:
        f"{RESULTS}/logs/data/code_tokenizer.log",
    benchmark:
        f"{RESULTS}/benchmarks/data/code_tokenizer.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        vocab_size=config["tokenizer"]["vocab_size"],
        train_bytes=config["tokenizer"]["train_bytes"],
        corpus_dir=lambda wildcards, input: os.path.dirname(input[0]),
    shell:
        "python -m repro data tokenizer --corpus-dir {params.corpus_dir} --vocab-size {params.vocab_size} "
        "--train-bytes {params.train_bytes} --threads {threads} --out {output} > {log} 2>&1"


rule code_tokens:
    input:
        corpus=rules.code_corpus.output.train,
        tokenizer=rules.code_tokenizer.output,
    output:
        train=f"{CORPUS}/tokens/train.npz",
        valid=f"{CORPUS}/tokens/valid.npz",
        card=f"{CORPUS}/tokens/card.json",
    log:
        f"{RESULTS}/logs/data/code_tokens.log",
    benchmark:
        f"{RESULTS}/benchmarks/data/code_tokens.tsv"
    priority: PRIORITY_DATA
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        corpus_dir=lambda wildcards, input: os.path.dirname(input.corpus),
        out_dir=parent_dir,
    shell:
        "python -m repro data tokenize --corpus-dir {params.corpus_dir} --tokenizer {input.tokenizer} "
        "--out-dir {params.out_dir} --threads {threads} > {log} 2>&1"


# The levels a language model of this corpus must beat: the valid split's unigram and bigram
# cross-entropy under counts of the train split (repro.analysis.reference_levels); rules that use it
# pass `--seq-len L --heldout-chunks n` in params.heldout to take them on the held-out chunks a model
# is evaluated on.
rule code_reference_levels:
    input:
        train=rules.code_tokens.output.train,
        valid=rules.code_tokens.output.valid,
    output:
        CODE_LEVELS,
    log:
        f"{RESULTS}/logs/data/code_reference_levels.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=5,
    params:
        heldout="",
    shell:
        "python -m repro data reference-levels --train {input.train} --valid {input.valid} {params.heldout} "
        "--out {output} > {log} 2>&1"


# The same levels on the held-out chunks each paper's decoders are evaluated on (their targets, as the
# models see them), with the whole split's beside them (whole_split): the code corpus offline, the
# paper's own hub text at paper scale (lm_split_files). Claims gate their runs on it and the loss
# figures draw it.
use rule code_reference_levels as lm_reference_levels with:
    input:
        unpack(lm_split_files),
    output:
        f"{RESULTS}/{{paper,simplified_blocks|param_allocation}}/data/lm_reference_levels.json",
    log:
        f"{RESULTS}/logs/{{paper}}/lm_reference_levels.log",
    params:
        heldout=lm_heldout_options,
