// fuzz_tool_dcs_main.cpp -- qmmm-dcs's own source (src_cxx/tools/dcs_main.cpp, unchanged) with its main() renamed
// qmmm_dcs_main, so that fuzz_tool_cli runs the tool's whole command line in-process.
#define main qmmm_dcs_main
#include "dcs_main.cpp"
