"""``python -m dialeval.models.neural DATA.npz OUT.npz SPEC_JSON``: train one member in a worker process."""

if __name__ == "__main__":
    import sys

    from dialeval.models.neural.training import worker_main

    worker_main(sys.argv[1:])
