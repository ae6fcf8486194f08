"""From a declared source to what a run needs: resolve it (`resolve`), import and build it
(`discovery`, `bounded_build`), keep its derived columns between runs (`cache`,
`fingerprints`), tell dropped from never loaded (`loaded`), find its local pipelines
(`onboarding`) and declare a project's sources (`init`)."""
