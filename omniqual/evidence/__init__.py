"""The evidence store: one directory per run, written crash-safely, read tolerantly, kept readable
across schema versions. It imports nothing of omniqual but the domain.

Its public face (import from the modules; this package re-exports nothing):

* open a run and append to it: ``store.RunWriter`` (``create``, ``resume``, ``record``,
  ``put_artifact``, ``finish``);
* read runs back: ``run_reader.find_runs``, ``read_run``, ``iter_results``; compile reads a run's
  results through ``digest_files.current_digest``;
* artifacts: ``artifacts.artifact_path``, ``store_file``, ``store_bytes``, ``check_artifact``;
* verify recorded evidence: ``verify.verify_runs`` (the journal's anchors: ``anchor``);
* merge the runs of several evidence directories: ``merge.merge_evidence``;
* the one error it raises: ``errors.StoreError``.

The rest (``journal``, ``chain``, ``anchor``, ``migrations``, ``durable``, ``digest``,
``run_digest``) is how it does it.
"""
