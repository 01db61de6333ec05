# sidesteps: maven-checkstyle-plugin's check goal (nohttp-checkstyle-validation, validate phase) reading
# src/checkstyle/nohttp-checkstyle.xml, which is not in Bloatlens's copy of the poms
mkdir -p .mvn && echo "-Dcheckstyle.skip=true" >> .mvn/maven.config
# sidesteps: Bloatlens adds a JUnit Vintage engine because junit:junit 4 is on the test class path (through
# Testcontainers), and, with no 5.12.2 in ~/.m2, takes an older one (5.9.3), which cannot load against
# platform 1.12.2 (ClassNotFoundException: org.junit.platform.commons.util.ClassFilter): fetch 5.12.2
mvn -q -B -Dstyle.color=never dependency:get -Dartifact=org.junit.vintage:junit-vintage-engine:5.12.2 >/dev/null
