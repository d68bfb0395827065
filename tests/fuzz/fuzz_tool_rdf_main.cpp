// fuzz_tool_rdf_main.cpp -- qmmm-rdf's own source (src_cxx/tools/rdf_main.cpp, unchanged) with its main() renamed
// qmmm_rdf_main, so that fuzz_tool_cli runs the tool's whole command line in-process.
#define main qmmm_rdf_main
#include "rdf_main.cpp"
