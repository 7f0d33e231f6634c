"""The toy "thumbs" protocol and its result family, defined only inside the tests and registered only through
`settings.MTEVAL_PROTOCOLS` and `settings.MTEVAL_RESULT_FAMILIES`: the walkthrough of docs/architecture.md."""
