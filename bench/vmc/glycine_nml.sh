# glycine_nml.sh -- sourced by the VMC benches: the glycine case of seed 004 (fragment 1 in the field of
# fragments 2+3, 268,938 cells) as a qmmm_vmc namelist on stdout, so every bench runs the same system.
#   glycine_nml WALKERS N_EQUIL N_BLOCKS STEPS_PER_BLOCK BACKEND PRECISION [FIELD_CALLS [ENERGY_EVERY [N_THREADS]]]
# Defaults of the optional ones: 'batched' (the field at every step, as the benches measured it so far), a
# local energy every sweep, n_threads = 1 (one core: the field's threads and the walker threads alike).
glycine_nml() {
  cat <<NML
&vmc
  molden = 'data/glycine_trimer/frag1_embedded.molden'
  cubes = 'data/glycine_trimer/fragments23_density.cube.gz'
  density_threshold = 4.1e-4
  jastrow = .true., b_ee = 3.0, b_en = 30.0
  n_walkers = $1, n_equil = $2, n_blocks = $3, steps_per_block = $4, energy_every = ${8:-1}
  seed = 4, n_threads = ${9:-1}
  backend = '$5', precision = '$6', field_calls = '${7:-batched}'
/
NML
}
