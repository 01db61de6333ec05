# sidesteps: maven-compiler-plugin's <testExcludes> (**/*Benchmark*) not honoured
find src/test -name '*Benchmark*' -delete
