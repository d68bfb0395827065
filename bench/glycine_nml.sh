# glycine_nml.sh -- sourced by the VMC benches: the glycine case of seed 004 (fragment 1 in the field of
# fragments 2+3, 268,938 cells) as a qmmm_vmc namelist on stdout, so every bench runs the same system.
#   glycine_nml WALKERS N_EQUIL N_BLOCKS STEPS_PER_BLOCK BACKEND PRECISION
glycine_nml() {
  cat <<NML
&vmc
  molden = 'data/glycine_trimer/frag1_embedded.molden'
  cubes = 'data/glycine_trimer/fragments23_density.cube.gz'
  density_threshold = 4.1e-4
  jastrow = .true., b_ee = 3.0, b_en = 30.0
  n_walkers = $1, n_equil = $2, n_blocks = $3, steps_per_block = $4
  seed = 4, n_threads = 1
  backend = '$5', precision = '$6', field_calls = 'batched'
/
NML
}
