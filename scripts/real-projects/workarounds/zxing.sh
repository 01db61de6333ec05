# sidesteps: the zxingorg module, which the pom adds in a profile activated on JDK 17+: Bloatlens copies only
# the poms of <modules> outside profiles, then Maven on the copy activates the profile ("Child module
# …/zxingorg of …/pom.xml does not exist"): the profile's module is taken out
sed -i '/<module>zxingorg<\/module>/d' pom.xml
