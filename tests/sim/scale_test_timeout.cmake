# Read by ctest after the tests of sim_scale_test are discovered (see CMakeLists.txt): the
# 256-worker run takes about 0.4 s in a Release build and 10-15 s under ASan + UBSan (Debug).
set_tests_properties(SimulatorScaleTest.TwoHundredFiftySixWorkersFinish PROPERTIES TIMEOUT 60)
