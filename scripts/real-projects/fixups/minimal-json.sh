# javac 17 no longer accepts -source/-target 1.5
sed -i 's|<source>1.5</source>|<source>1.8</source>|; s|<target>1.5</target>|<target>1.8</target>|' com.eclipsesource.json/pom.xml
