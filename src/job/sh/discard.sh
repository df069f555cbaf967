# Removes every file of the model's job (discard_job, for --force).
rm -rf -- "$j"
