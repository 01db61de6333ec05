# sidesteps: maven-replacer-plugin's replace goal (process-sources) reading
# src/main/java/org/HdrHistogram/Version.java.template, which is not in Bloatlens's copy of the poms: the
# plugin is taken out of the pom (layout.sh's `mvn test` already wrote src/main/java/org/HdrHistogram/Version.java)
python3 - <<'PY'
import re
p = "pom.xml"
s = open(p).read()
s = re.sub(r"\s*<plugin>\s*<groupId>com.google.code.maven-replacer-plugin</groupId>.*?</plugin>", "", s, flags=re.S)
open(p, "w").write(s)
PY
