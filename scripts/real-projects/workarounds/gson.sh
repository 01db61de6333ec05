# sidesteps: the reactor's several module-info.java in one javac run ("too many module declarations found");
# the templating plugin's generated source (GsonBuildConfig, in target/generated-sources/java-templates, made
# by layout.sh's `mvn test`), which Bloatlens does not compile: copied into src/main/java; and the modules
# Maven 3.8.7 cannot build either (proto: its protobuf plugin needs Maven 3.9.6, so its generated test
# sources are missing; test-jpms: needs gson's jar), which in Bloatlens's one javac run for every module
# would keep all the others from compiling: left out of the reactor
find . -name module-info.java -delete
cp -r gson/target/generated-sources/java-templates/. gson/src/main/java/
sed -i '/<module>proto<\/module>/d; /<module>test-jpms<\/module>/d' pom.xml
