# sidesteps: the reactor's several module-info.java in one javac run ("too many module declarations found")
find . -path '*/src/main/java/module-info.java' -delete
