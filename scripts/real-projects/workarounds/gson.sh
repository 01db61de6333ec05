# sidesteps: the reactor's several module-info.java in one javac run ("too many module declarations found"),
# and the templating plugin's generated source (GsonBuildConfig, in target/generated-sources/java-templates,
# made by layout.sh's `mvn test`), which Bloatlens does not compile: copied into src/main/java
find . -name module-info.java -delete
cp -r gson/target/generated-sources/java-templates/. gson/src/main/java/
